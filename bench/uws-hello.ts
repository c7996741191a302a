// The raw limit for HTTP: a bare uWebSockets.js server answering GET /v1/health with the same
// body and Content-Type the service sends, and nothing else (no auth, no routing table, no
// JSON.stringify). Run as its own process by the bench, driven with the same load settings.
// POST /v1/remember reads the body and answers 201: bench:mixed's control phase sends the
// write stream here, so the generator's own cost is measured without the service's.
import uWS from 'uWebSockets.js';

const body = JSON.stringify({ status: 'ok', version: '0.0.0' });

uWS
  .App()
  .get('/v1/health', (res) => {
    res.writeHeader('Content-Type', 'application/json').end(body);
  })
  .post('/v1/remember', (res) => {
    res.onAborted(() => {});
    res.onData((_chunk, isLast) => {
      if (isLast) res.writeStatus('201 Created').writeHeader('Content-Type', 'application/json').end(body);
    });
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) {
      console.error('uws-hello: could not listen');
      process.exit(1);
    }
    console.log(`listening on ${uWS.us_socket_local_port(socket as unknown as uWS.us_socket)}`);
  });

process.once('SIGTERM', () => process.exit(0));
