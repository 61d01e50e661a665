// Shared by the core and the local MCP server (which refuses files holding a key), loaded without the core.

export const API_KEY = /^ak_live_[A-Za-z0-9]{32}$/;
/** An API key anywhere in a text. */
export const API_KEY_IN_TEXT = /ak_live_[A-Za-z0-9]{32}/;
