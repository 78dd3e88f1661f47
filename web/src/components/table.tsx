import type { ReactNode } from 'react';

export type Column = string | { label: string; hidden?: boolean; className?: string };

// A list's table: named for screen readers by its caption, scrolling sideways on its own when
// a narrow screen cannot hold it (and so reachable by Tab, to scroll it by keyboard). A column
// may be named for screen readers only (Actions).
export function Table({ caption, columns, busy, children }: { caption: string; columns: readonly Column[]; busy?: boolean; children: ReactNode }) {
  return (
    <div className="table-wrap" aria-busy={busy} role="group" aria-label={caption} tabIndex={0}>
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => {
              const { label, hidden, className } = typeof column === 'string' ? { label: column } : column;
              return (
                <th key={label} scope="col" className={className}>
                  {hidden ? <span className="visually-hidden">{label}</span> : label}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
