import path from 'node:path';
import { DEFAULT_DATA_DIR } from '../../config';

// Where contact imports keep their files while they run: DATA_DIR/imports. The service, the
// worker and the command line find the same folder from the same DATA_DIR.
export function importsDir(dataDir: string | undefined): string {
  return path.join(dataDir ?? DEFAULT_DATA_DIR, 'imports');
}
