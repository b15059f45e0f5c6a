package postgres

// ClaimPlan is the dialect's ClaimPlan, for the external tests.
var ClaimPlan = dialect.ClaimPlan

// Dialect is the dialect, for the external tests.
var Dialect = dialect
