import Fastify from 'fastify';

/** The floor of the `cairn serve` start-up row: a bare Fastify answering GET /health on argv's port. */
const app = Fastify();
app.get('/health', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port: Number(process.argv[2]) });
