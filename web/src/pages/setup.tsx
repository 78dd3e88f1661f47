import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ErrorBanner } from '../components/error-banner';
import { Field } from '../components/field';
import { HOME, Link, navigate, PRODUCT, useLocation } from '../router';
import { fieldErrors, trpc } from '../trpc';

export function SetupPage() {
  const { search } = useLocation();
  const token = search.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [mismatch, setMismatch] = useState(false);
  // Whose password this is, and the service's rule for it, before anything is typed.
  const info = useQuery({ ...trpc.dashboard.auth.setupInfo.queryOptions({ token }), staleTime: Infinity });
  const queryClient = useQueryClient();
  // Setting the password signs its person in (as sign-in does): on to the dashboard, as them.
  const setup = useMutation(
    trpc.dashboard.auth.setup.mutationOptions({
      // Whoever was signed in here before is not any more: nothing of theirs is kept.
      onSuccess: async () => {
        await queryClient.resetQueries();
        navigate(HOME, { replace: true });
      },
    }),
  );
  const errors = fieldErrors(setup.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setMismatch(password !== confirm);
    if (password === confirm) setup.mutate({ token, password });
  };

  if (info.isError) {
    return (
      <main className="center">
        <div className="card">
          <p className="product">{PRODUCT}</p>
          <h1>Set your password</h1>
          <ErrorBanner error={info.error} />
          <p>Ask the person who invited you for a new link.</p>
          <Link to="/sign-in">Sign in</Link>
        </div>
      </main>
    );
  }
  const rule = info.data
    ? `At least ${info.data.minPasswordLength} characters, at most ${info.data.maxPasswordLength}.`
    : 'Loading the password rules…';
  return (
    <main className="center">
      <form className="card" onSubmit={submit} noValidate>
        <p className="product">{PRODUCT}</p>
        <h1>Set your password</h1>
        <p role="status">{info.data ? <>This link sets the password for <strong>{info.data.email}</strong>.</> : 'Checking the link…'}</p>
        <ErrorBanner error={setup.error} />
        {/* A hidden username beside the new password: a password manager files it under the right email. */}
        <input type="email" autoComplete="username" value={info.data?.email ?? ''} readOnly hidden />
        <Field
          label="New password"
          type="password"
          autoComplete="new-password"
          hint={rule}
          required
          minLength={info.data?.minPasswordLength}
          maxLength={info.data?.maxPasswordLength}
          value={password}
          error={errors.password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <Field
          label="Repeat the password"
          type="password"
          autoComplete="new-password"
          required
          value={confirm}
          error={mismatch ? 'The two passwords differ' : undefined}
          onChange={(e) => setConfirm(e.target.value)}
        />
        <button type="submit" disabled={setup.isPending}>
          Set password
        </button>
      </form>
    </main>
  );
}
