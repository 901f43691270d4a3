import { Module } from '@nestjs/common';
import { ResourceRegistry } from '../registry/resource-registry.js';
import { DiscoveryController } from '../discovery/discovery.controller.js';
import { DiscoveryService } from '../discovery/discovery.service.js';
import { OpenApiDocumentsService } from '../discovery/openapi-documents.service.js';

/** Discovery (legacy and aggregated) and OpenAPI v2/v3 documents, generated from each tenant's served resources, on routes of their own. */
@Module({
  controllers: [DiscoveryController],
  providers: [
    { provide: DiscoveryService, useFactory: (registry: ResourceRegistry) => new DiscoveryService(registry), inject: [ResourceRegistry] },
    { provide: OpenApiDocumentsService, useFactory: (registry: ResourceRegistry) => new OpenApiDocumentsService(registry), inject: [ResourceRegistry] },
  ],
  exports: [DiscoveryService, OpenApiDocumentsService],
})
export class DiscoveryModule {}
