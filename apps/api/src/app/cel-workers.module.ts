import { Module } from '@nestjs/common';
import { AdmissionChainModule } from './admission-chain.module.js';
import { CelRuleWorkers } from '../cel-workers/cel-rule-workers.service.js';

/** The CEL worker pool: custom resources' validation rules evaluated off the event loop (see CelRuleWorkers). */
@Module({
  imports: [AdmissionChainModule],
  providers: [CelRuleWorkers],
  exports: [CelRuleWorkers],
})
export class CelWorkersModule {}
