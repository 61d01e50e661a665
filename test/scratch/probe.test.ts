import { it } from 'vitest';
import { api, startTestServer } from '../helpers/server.js';

it('probe', async () => {
  const s = await startTestServer();
  const r = await api(s.apiUrl, null, 'GET', '/v1/openapi.json');
  console.log(JSON.stringify(r.json.paths['/v1/artifacts/{id}/publish'].post.responses, null, 1));
  await s.close();
});
