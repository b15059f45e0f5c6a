package sqlite

// Dialect is the dialect, for the external tests.
var Dialect = dialect
