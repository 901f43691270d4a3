import { Module } from '@nestjs/common';
import { AuthzModule } from './authz.module.js';
import { HealthController } from '../health/health.controller.js';
import { HealthListener } from '../health/health-listener.js';
import { HealthService } from '../health/health.service.js';

/** Health and metrics: /healthz, /livez, /readyz, /metrics over HTTPS, and the optional plain listener. */
@Module({
  imports: [AuthzModule],
  controllers: [HealthController],
  providers: [HealthService, HealthListener],
  exports: [HealthService, HealthListener],
})
export class HealthModule {}
