import type { ReactNode } from 'react';

// A whole-page message (loading, unreachable), in the same frame as the sign-in card.
export function Status({ children, role = 'status' }: { children: ReactNode; role?: 'status' | 'alert' }) {
  return (
    <main className="center">
      <p role={role}>{children}</p>
    </main>
  );
}
