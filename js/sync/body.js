// A request's body read within a limit, for the relay's routes: past the
// limit, what is left is read and dropped, never kept. Answering before the
// body is read instead makes the runtime cut the connection (wrangler dev
// then answers the next request with a 503), so the body is always drained.
export async function boundedBody(request, limit) {
  const reader = request.body?.getReader();
  if (!reader) return new Uint8Array(0);
  // A declared length past the limit: nothing is kept from the start.
  let chunks = Number(request.headers.get("content-length")) > limit ? undefined : [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > limit) chunks = undefined;
    chunks?.push(value);
  }
  if (!chunks) return undefined;
  const body = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}
