package backoffice

import "github.com/pixgate/pixgate/internal/store"

// The rows the panel receives from the back office.
type (
	// User is a person who logs in to the administration panel.
	User = store.User
	// Session is a panel login.
	Session = store.Session
	// Activity counts a period's transactions by type and status.
	Activity = store.Activity
	// Flows is the money that moved in a period, as the ledger has it.
	Flows = store.Flows
)

// Panel user roles.
const (
	RoleOperator = store.RoleOperator // sees and manages every client
	RoleMerchant = store.RoleMerchant // sees only its own client
)
