import type { NewSession, SignedInUser } from '../services/dashboard/sessions';

// What the dashboard's procedures get from HTTP: the session the cookie names (resolved once
// per request), and the cookie itself to set or clear.
export interface DashboardHttp {
  user: SignedInUser | null;
  startSession(session: NewSession): void;
  endSession(): void;
  // Client address, for the sign-in failure limit's bookkeeping.
  ip: string;
}
