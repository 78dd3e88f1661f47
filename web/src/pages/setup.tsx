import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ErrorBanner } from '../components/error-banner';
import { Field } from '../components/field';
import { Link, useLocation } from '../router';
import { fieldErrors, trpc } from '../trpc';

const MIN_LENGTH = 12;

export function SetupPage() {
  const { search } = useLocation();
  const token = search.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [mismatch, setMismatch] = useState(false);
  const setup = useMutation(trpc.dashboard.auth.setup.mutationOptions());
  const errors = fieldErrors(setup.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setMismatch(password !== confirm);
    if (password === confirm) setup.mutate({ token, password });
  };

  if (setup.isSuccess) {
    return (
      <main className="center">
        <div className="card">
          <h1>Password set</h1>
          <p role="status">
            The password for <strong>{setup.data.email}</strong> is set. This link cannot be used again.
          </p>
          <Link className="button" to="/sign-in">
            Sign in
          </Link>
        </div>
      </main>
    );
  }
  return (
    <main className="center">
      <form className="card" onSubmit={submit} noValidate>
        <h1>Set your password</h1>
        <ErrorBanner error={setup.error} />
        <Field
          label="New password"
          type="password"
          autoComplete="new-password"
          hint={`At least ${MIN_LENGTH} characters.`}
          required
          minLength={MIN_LENGTH}
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
