import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { printGraphQLSchema } from '../resolvers/schema';
import { SCHEMA_FILE } from '../paths';

writeFileSync(SCHEMA_FILE, printGraphQLSchema());
process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
