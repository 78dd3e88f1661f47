import { Account } from './account';
import { ApiKey } from './api-key';
import { User } from './user';
import { UserSession } from './user-session';
import { UserSetupToken } from './user-setup-token';

// What models/ is for: the administrative tables (accounts, API keys, dashboard users, their
// sessions and setup links), which the admin command line and the dashboard's sign-in write a
// few rows at a time. There, sequelize-typescript's classes are a convenience worth their
// cost. Everything else, the request path and every new feature included, reaches the database
// through src/db/sql/ (docs/architecture.md, "One data layer"): no new model is to be added,
// and these five may move there too.
export { Account, ApiKey, User, UserSession, UserSetupToken };

// Registered explicitly (no glob): the list is the schema the code relies on.
export const MODELS = [Account, ApiKey, User, UserSetupToken, UserSession];
