import { Module } from '@nestjs/common';
import { AuthnModule } from './authn.module.js';
import { AuthzModule } from './authz.module.js';
import { ResourceStoreModule } from './resource-store.module.js';
import { ResourceController } from '../api/resource.controller.js';

/**
 * The resource API: the catch-all controller for `/api/...`, `/apis/...`
 * (and both under `/clusters/{tenant}`), which resolves the request and
 * hands it to the verb's handler (handlers/).
 */
@Module({
  imports: [ResourceStoreModule, AuthnModule, AuthzModule],
  controllers: [ResourceController],
})
export class ResourceApiModule {}
