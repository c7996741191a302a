// Tenant isolation with the vector index off: the walk is test/support/tenant-isolation.ts.
// The two settings run in separate files, so in separate processes: a second service started
// in a process that closed one has crashed in libuv (uv__epoll_ctl_prep) now and then.
import { tenantIsolationSuite } from './support/tenant-isolation.js';

tenantIsolationSuite('off');
