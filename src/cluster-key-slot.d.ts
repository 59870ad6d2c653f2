/** The slot of a key on a Redis Cluster (the library ioredis itself routes by); it ships no types. */
declare module 'cluster-key-slot' {
  export default function calculateSlot(key: string | Buffer): number;
}
