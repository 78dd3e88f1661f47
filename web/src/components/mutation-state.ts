// What a dialog shows of the call it makes: a mutation, or several seen as one. Closing the
// dialog resets it, so that the next opening starts without the last one's error.
export interface MutationState {
  isPending: boolean;
  error: unknown;
  reset: () => void;
}
