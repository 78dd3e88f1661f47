import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ErrorBanner } from '../components/error-banner';
import { Field } from '../components/field';
import { HOME, navigate, PRODUCT, returnPath, useLocation } from '../router';
import { fieldErrors, trpc } from '../trpc';

export function SignInPage() {
  const queryClient = useQueryClient();
  const { search } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useMutation(
    trpc.dashboard.auth.signIn.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.dashboard.auth.me.queryKey() });
        navigate(returnPath(search.get('next'), HOME), { replace: true });
      },
    }),
  );
  const errors = fieldErrors(signIn.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate({ email, password });
  };
  return (
    <main className="center">
      <form className="card" onSubmit={submit} noValidate>
        <p className="product">{PRODUCT}</p>
        <h1>Sign in</h1>
        <ErrorBanner error={signIn.error} />
        <Field label="Email" type="email" autoComplete="username" required value={email} error={errors.email} onChange={(e) => setEmail(e.target.value)} />
        <Field
          label="Password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          error={errors.password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <button type="submit" disabled={signIn.isPending}>
          {signIn.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
