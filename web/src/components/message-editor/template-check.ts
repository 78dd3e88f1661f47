import { useMutation } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { trpc } from '../../trpc';
import type { MessageStepInput } from './message-types';

// The step's templates checked a moment after each change (dashboard.messages.check), with no
// preview contact needed: a Liquid parse error is known as it is typed. The last answer stays
// until the next one arrives, so an error does not blink out while the next check is asked.
export function useTemplateCheck(stepId: string, step: MessageStepInput): unknown {
  const [error, setError] = useState<unknown>(null);
  const { mutate } = useMutation(trpc.dashboard.messages.check.mutationOptions({ onSuccess: () => setError(null), onError: setError }));
  const body = JSON.stringify(step);
  useEffect(() => {
    const timer = setTimeout(() => mutate({ stepId, step: JSON.parse(body) }), 300);
    return () => clearTimeout(timer);
  }, [mutate, stepId, body]);
  return error;
}
