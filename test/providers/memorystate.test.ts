import { InMemoryStateStore } from '../../shared/providers/memorystate';
import { stateStoreContract } from './state-contract';

stateStoreContract('InMemoryStateStore', async (clock) => new InMemoryStateStore(clock));
