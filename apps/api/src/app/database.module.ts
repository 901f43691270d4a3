import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../config/app-config.js';
import { connectDatabase, DATABASE, DatabaseConnection } from '../database/database-connection.js';
import { LOGGER } from '../observability/logger.js';

/**
 * PostgreSQL for the whole server (global): connected, embedded when
 * needed, migrated at creation; closed last at shutdown.
 */
@Global()
@Module({
  providers: [
    { provide: DatabaseConnection, useFactory: connectDatabase, inject: [APP_CONFIG, LOGGER] },
    { provide: DATABASE, useFactory: (c: DatabaseConnection) => c.db, inject: [DatabaseConnection] },
  ],
  exports: [DatabaseConnection, DATABASE],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(DatabaseConnection) private readonly connection: DatabaseConnection) {}

  async onApplicationShutdown(): Promise<void> {
    await this.connection.close();
  }
}
