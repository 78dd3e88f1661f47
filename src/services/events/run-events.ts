import type { NewEventOf } from '../../schemas/event';
import type { RunStatus } from '../../schemas/statuses';
import type { RunDto } from '../../schemas/sequence';

// The events a run write records. The run is as the API returns it, with its sequence and
// contact.

export function runCreatedEvent(run: RunDto, sequenceId: string, contactId: string): NewEventOf {
  return { type: 'run.created', data: { run: { ...run, sequenceId, contactId } } };
}

export function runStatusChangedEvent(run: RunDto, sequenceId: string, contactId: string, from: RunStatus): NewEventOf {
  return { type: 'run.status_changed', data: { run: { ...run, sequenceId, contactId }, from, to: run.status } };
}
