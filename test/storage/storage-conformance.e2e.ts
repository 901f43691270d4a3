import { postgresStorage } from './support/conformance-storage.js';
import { describeStorageConformance } from './support/storage-conformance.suite.js';

describeStorageConformance('PostgreSQL store', postgresStorage);
