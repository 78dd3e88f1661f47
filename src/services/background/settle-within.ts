// Waits for work to settle, at most boundMs of real time (it holds a process's exit, so the
// injected timers, which tests move by hand, do not apply). Answers whether the bound ran out.
export async function settleWithin(work: Promise<unknown>, boundMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    work.then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), boundMs))),
  ]);
  clearTimeout(timer);
  return timedOut;
}
