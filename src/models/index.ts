import { Account } from './account';
import { ApiKey } from './api-key';
import { Contact } from './contact';
import { Enrollment } from './enrollment';
import { Sequence } from './sequence';
import { SequenceRun } from './sequence-run';

export { Account, ApiKey, Contact, Enrollment, Sequence, SequenceRun };

// Registered explicitly (no glob): the list is the schema the code relies on.
export const MODELS = [Account, ApiKey, Contact, Sequence, SequenceRun, Enrollment];
