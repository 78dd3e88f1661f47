import { errorMessage } from '../trpc';

// What went wrong with a call, announced at once; nothing while all is well.
export function ErrorBanner({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="banner error" role="alert">
      {errorMessage(error)}
    </p>
  );
}
