// The dashboard's sign-in messages, apart so that the error mapping (errors.ts) can name
// their codes without importing the procedures (which import it).
export const SIGN_IN_REQUIRED = 'Sign in to continue';
// The same for an unknown email and a wrong password.
export const SIGN_IN_FAILED = 'Email or password is incorrect';
