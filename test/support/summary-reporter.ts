// Mocha reporter: the usual Spec output, then one closing line for CI:
// "N passed, N failed, N skipped" (passes, failures, pending).
import Mocha = require('mocha');

const { EVENT_RUN_END } = Mocha.Runner.constants;

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options); // Spec's own EVENT_RUN_END (epilogue) listener runs first
    runner.once(EVENT_RUN_END, () => {
      const { passes = 0, failures = 0, pending = 0 } = this.stats;
      process.stdout.write(`${passes} passed, ${failures} failed, ${pending} skipped\n`);
    });
  }
}

export = SummaryReporter;
