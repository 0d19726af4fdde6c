package portability

// RedactKind exposes redactKind to the external tests.
const RedactKind = redactKind
