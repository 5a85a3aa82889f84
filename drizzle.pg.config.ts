import { defineConfig } from 'drizzle-kit';

// PostgreSQL mode (issue 26): its schema is generated from the SQLite one (scripts/pg-schema.ts);
// its migrations are its own.
export default defineConfig({
  dialect: 'postgresql',
  schema: './server/db/pg-schema.ts',
  out: './server/db/pg-migrations',
});
