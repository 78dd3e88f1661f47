import { useEffect, useRef } from 'react';
import type { Row } from './model';
import { errorsOfStep } from './model';

// Every problem of a save, once, at the top of the builder: each a link to the field that shows
// it (the form is open by then), which it scrolls to and focuses. The fields keep their own
// message; this list is the only other place it is said.

// The field showing a message in a step's card: the input its error paragraph describes, else
// the paragraph (or the card) itself.
function focusShown(rowKey: string, message: string) {
  const card = document.getElementById(`flow-${rowKey}`);
  if (!card) return;
  const shown = [...card.querySelectorAll<HTMLElement>('.error, .step-errors li')].find((el) => el.textContent === message);
  const field = shown?.id ? card.querySelector<HTMLElement>(`[aria-describedby~="${shown.id}"]`) : null;
  const target = field ?? shown ?? card;
  target.scrollIntoView({ block: 'center' });
  if (!field) target.setAttribute('tabindex', '-1');
  target.focus({ preventScroll: true });
}

// `refusals` counts the saves refused: each brings the summary into view, as a person would
// look for what went wrong; correcting a field (which shortens the list) leaves the focus there.
export function ErrorSummary({ rows, errors, refusals }: { rows: readonly Row[]; errors: Record<string, string>; refusals: number }) {
  const box = useRef<HTMLDivElement>(null);
  const items = rows.flatMap((row, i) =>
    Object.entries(errorsOfStep(errors, i)).map(([path, message]) => ({
      key: `${row.key}:${path}`,
      rowKey: row.key,
      message,
      // The API's messages name their step ('Step "welcome": …'); the schemas' do not.
      text: message.startsWith('Step "') ? message : `Step ${i + 1} (${row.step.id}): ${message}`,
    })),
  );
  const count = items.length;
  useEffect(() => {
    if (refusals === 0) return;
    box.current?.scrollIntoView({ block: 'start' });
    box.current?.focus({ preventScroll: true });
  }, [refusals]);
  if (count === 0) return null;
  return (
    <div ref={box} className="banner error error-summary" role="alert" tabIndex={-1} aria-labelledby="builder-error-summary">
      <h3 id="builder-error-summary">Nothing was saved: {count === 1 ? 'one problem' : `${count} problems`} to correct</h3>
      <ul>
        {items.map((item) => (
          <li key={item.key}>
            <a
              href={`#flow-${item.rowKey}`}
              onClick={(e) => {
                e.preventDefault();
                focusShown(item.rowKey, item.message);
              }}
            >
              {item.text}
            </a>
          </li>
        ))}
      </ul>
    </div>
  );
}
