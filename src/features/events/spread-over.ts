/**
 * Does `act` to each of `items` at its own moment within `withinMs`, and resolves once the last
 * is done; with a window of 0, to all at once. A stop ends its event streams this way, so the
 * pages of a stopped instance reconnect to the others over the drain delay, not all in one
 * instant (contract section 2.2, v4). The window is cut into one slot per item and the items
 * take the slots in random order, each at a random point of its slot: spread evenly, never
 * bunched by chance, the last before `withinMs` ends.
 */
export function spreadOver<T>(
  items: readonly T[],
  withinMs: number,
  random: () => number,
  act: (item: T) => void,
): Promise<void> {
  if (withinMs <= 0 || items.length === 0) {
    for (const item of items) act(item);
    return Promise.resolve();
  }
  const order = [...items];
  for (let i = order.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const slotMs = withinMs / order.length;
  let left = order.length;
  return new Promise((resolve) => {
    order.forEach((item, slot) => {
      const atMs = Math.min(Math.floor((slot + random()) * slotMs), withinMs - 1);
      setTimeout(() => {
        act(item);
        left -= 1;
        if (left === 0) resolve();
      }, atMs);
    });
  });
}
