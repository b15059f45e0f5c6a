package admin

import (
	"context"
	"io"
	"time"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/transfer"
)

// Gateway is what the panel asks of the use cases (*gateway.Service): a
// client, and the money operations an operator or a merchant user may
// start. Each method's errors are those its gateway doc comment lists.
type Gateway interface {
	// InSandbox reports whether pixgate runs in the sandbox environment.
	InSandbox() bool
	// Sandbox is the sandbox's pay and expire actions; nil where they are
	// not offered.
	Sandbox() *gateway.Sandbox
	Client(ctx context.Context, clientID string) (pix.Client, error)
	Statement(ctx context.Context, c pix.Client, q gateway.StatementQuery) (*gateway.Statement, error)
	RetryDelivery(ctx context.Context, c pix.Client, eventID string) error
	Charge(ctx context.Context, c pix.Client, id string) (pix.Transaction, error)
	// Today is the São Paulo date that prices charges with a due date.
	Today() pix.Date
	// Transfers is the send engine, which returns unmatched receipts.
	Transfers() *transfer.Engine
}

// Users is what creating panel users and resetting their passwords asks of
// the back office (*backoffice.Service); the cli's users commands use it
// through CreateUser and ResetPassword.
type Users interface {
	// Now is the panel's clock; Rand the source of its ids, passwords and
	// tokens.
	Now() time.Time
	Rand() io.Reader
	CreateUser(ctx context.Context, u pix.User) error
	CreateFirstUser(ctx context.Context, u pix.User) (created bool, err error)
	HasUsers(ctx context.Context) (bool, error)
	UserByEmail(ctx context.Context, email string) (pix.User, error)
	SetUserPassword(ctx context.Context, userID, passwordHash string) (sessionsEnded int64, err error)
}

// Backoffice is what the panel asks of the back office (*backoffice.Service):
// its users, sessions and login attempts, the operators' tools (clients,
// their credentials and fees, unmatched receipts, suspense, the PSP's
// health) and the read-only views of a client's money. Each method's
// errors are those its backoffice doc comment lists.
type Backoffice interface {
	Users
	Clients(ctx context.Context) ([]pix.Client, error)
	Families(ctx context.Context, subLimit int) ([]backoffice.Family, error)
	SubAccountPage(ctx context.Context, parentID, cursor string, limit int) ([]backoffice.AccountRow, string, error)
	CreateClient(ctx context.Context, p backoffice.ClientParams) (backoffice.Credentials, error)
	RotateSecret(ctx context.Context, clientID string) (backoffice.Credentials, error)
	RotateWebhookSecret(ctx context.Context, clientID string) (backoffice.Credentials, error)
	SetFees(ctx context.Context, clientID string, cashin, payout pix.FeeRule) error
	DisableClient(ctx context.Context, clientID string) error
	UnmatchedReceipts(ctx context.Context, status string, limit int) ([]pix.UnmatchedReceipt, error)
	SuspenseBalance(ctx context.Context) (pix.Amount, error)
	PSPHealth() (h provider.Health, ok bool)
	SessionUser(ctx context.Context, sessionID string, now time.Time) (pix.Session, pix.User, error)
	NoteLoginAttempt(ctx context.Context, email, ip string, now time.Time, l backoffice.LoginLimit) (limited bool, err error)
	StartSession(ctx context.Context, sess pix.Session, replacedID, email, ip string, window time.Duration) error
	EndSession(ctx context.Context, sessionID string) error
	Overview(ctx context.Context, clientID string, from, to time.Time, failing int) (backoffice.Overview, error)
	FindTransactions(ctx context.Context, clientID, q string) ([]pix.Transaction, error)
	TransactionPage(ctx context.Context, clientID string, status pix.TxStatus, typ pix.TxType, cursor string, limit int) ([]pix.Transaction, string, error)
	TransactionDetail(ctx context.Context, clientID, id string) (backoffice.TransactionDetail, error)
	ClientEvent(ctx context.Context, clientID, eventID string) (pix.Event, error)
	RecurrencePage(ctx context.Context, clientID string, status pix.RecurrenceStatus, cursor string, limit int) ([]pix.Recurrence, string, error)
	RecurrenceDetail(ctx context.Context, clientID, id string) (backoffice.RecurrenceDetail, error)
	DisputePage(ctx context.Context, q backoffice.DisputeQuery) ([]pix.Dispute, string, error)
	BatchPage(ctx context.Context, clientID, state, cursor string, limit int) ([]pix.Batch, string, error)
	BatchDetail(ctx context.Context, clientID, id string) (backoffice.BatchDetail, error)
	ScheduledPage(ctx context.Context, clientID, state, cursor string, limit int) ([]backoffice.ScheduledPayout, string, error)
}
