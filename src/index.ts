/** cairn-store's main export is the TypeScript SDK, which also comes alone as `cairn-store-sdk`. */
export * from 'cairn-store-sdk';
