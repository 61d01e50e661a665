import { artifactStoreContract } from './artifact-store.contract.js';
import { eventStoreContract } from './event-store.contract.js';
import { mcpSessionStoreContract } from './mcp-session-store.contract.js';
import type { MakeMetadataStore } from './metadata-fixture.js';
import { metadataLifecycleContract } from './metadata-lifecycle.contract.js';
import { sharingStoreContract } from './sharing-store.contract.js';
import { sqlLayerContract } from './sql-layer.contract.js';
import { sweeperStoreContract } from './sweeper-store.contract.js';
import { tenantStoreContract } from './tenant-store.contract.js';
import { webhookStoreContract } from './webhook-store.contract.js';

/** One contract per metadata port, each against this engine (its adapter implements them all), and the SQL layer's. */
export function metadataStoreContracts(name: string, makeStore: MakeMetadataStore): void {
  metadataLifecycleContract(name, makeStore);
  tenantStoreContract(name, makeStore);
  artifactStoreContract(name, makeStore);
  sharingStoreContract(name, makeStore);
  sweeperStoreContract(name, makeStore);
  eventStoreContract(name, makeStore);
  webhookStoreContract(name, makeStore);
  mcpSessionStoreContract(name, makeStore);
  sqlLayerContract(name, makeStore);
}
