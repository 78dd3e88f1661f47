import { Account } from './account';
import { ApiKey } from './api-key';
import { Contact } from './contact';
import { Enrollment } from './enrollment';
import { Sequence } from './sequence';
import { SequenceRun } from './sequence-run';
import { User } from './user';
import { UserSession } from './user-session';
import { UserSetupToken } from './user-setup-token';

export { Account, ApiKey, Contact, Enrollment, Sequence, SequenceRun, User, UserSession, UserSetupToken };

// Registered explicitly (no glob): the list is the schema the code relies on.
export const MODELS = [Account, ApiKey, Contact, Sequence, SequenceRun, Enrollment, User, UserSetupToken, UserSession];
