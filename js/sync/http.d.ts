export interface HttpTransportOptions {
  /** Sent with each request; a function is called before each one (a token that expires). */
  headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
  /** Default: the global `fetch`. */
  fetch?: (input: string | URL, init: RequestInit) => Promise<Response>;
}
/** The transport `memory.sync` takes, posting each frame to a relay's URL. */
export function httpTransport(url: string | URL, options?: HttpTransportOptions): (request: Uint8Array) => Promise<Uint8Array>;
