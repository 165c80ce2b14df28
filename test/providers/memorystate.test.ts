import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { nodeClaimStoreContract } from './nodeclaim-contract';
import { stateStoreContract } from './state-contract';

stateStoreContract('InMemoryStateStore', async (clock) => new InMemoryStateStore(clock));

nodeClaimStoreContract('InMemoryStateStore', async (clock) => new InMemoryStateStore(clock));
