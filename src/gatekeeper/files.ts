import path from 'node:path';
import { PROJECT_ROOT } from '../paths';

/** Where the labelled prompts (*.jsonl) and the trained model live; both are committed. */
export const GATEKEEPER_DATA_DIR = path.join(PROJECT_ROOT, 'data', 'gatekeeper');
export const MODEL_FILE = path.join(GATEKEEPER_DATA_DIR, 'model.json');
/** Written by `src/gatekeeper/cli/generate-data.ts`; checked for drift by the tests. */
export const GENERATED_DATA_FILE = path.join(GATEKEEPER_DATA_DIR, 'generated.jsonl');
