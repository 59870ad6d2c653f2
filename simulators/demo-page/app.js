// @ts-check
// The demo frontend: plain ES modules against the gateway on the same origin. Every call goes
// through the typed client (client.js); every error shown is the problem object the gateway
// answered (RFC 9457).

import { api } from './client.js';

/**
 * @import { components, operations } from './types/gateway-api.js'
 * @typedef {components['schemas']['Problem']} Problem
 * @typedef {components['schemas']['ResultList']['itemListElement'][number]} Product
 * @typedef {Extract<Product['offers'], { offers: unknown[] }>} AggregateOffer
 * @typedef {components['schemas']['Bootstrap']['data']} FirstScreen
 * @typedef {components['schemas']['Bootstrap']['errors'][number]['part']} Part
 * @typedef {components['schemas']['ChannelFolders']} ChannelFolders
 * @typedef {NonNullable<operations['search']['parameters']['query']>} SearchQuery
 * @typedef {NonNullable<SearchQuery['sort']>} Sort
 */

/**
 * The element with this id, as the kind of element the page's markup makes it.
 * @template {HTMLElement} T
 * @param {string} id
 * @param {{ new (): T }} kind
 * @returns {T}
 */
function byId(id, kind) {
  const element = document.getElementById(id);
  if (!(element instanceof kind)) throw new Error(`index.html has no ${kind.name} #${id}`);
  return element;
}

/** @param {string} id */
const $ = (id) => byId(id, HTMLElement);
/** @param {string} id */
const field = (id) => byId(id, HTMLInputElement);

/**
 * A problem object as a person reads it: what happened, and what to quote when asking.
 * @param {HTMLElement} element
 * @param {Problem} problem
 */
function showProblem(element, problem) {
  element.replaceChildren();
  const title = document.createElement('strong');
  title.textContent = `${problem.title} (${problem.status})`;
  const detail = document.createElement('p');
  detail.textContent = problem.detail;
  const meta = document.createElement('p');
  meta.className = 'muted';
  meta.textContent = `${problem.code} · ${problem.source} · request ${problem.requestId}`;
  element.append(title, detail, meta);
  element.hidden = false;
}

/** @param {HTMLElement} element */
function clear(element) {
  element.replaceChildren();
  element.hidden = true;
}

/** @type {Readonly<Record<string, string>>} */
const AVAILABILITY = {
  InStock: 'In stock',
  OutOfStock: 'Out of stock',
  LimitedAvailability: 'Limited availability',
  PreOrder: 'Pre-order',
  PreSale: 'Pre-sale',
  BackOrder: 'Back-order',
  Discontinued: 'Discontinued',
  SoldOut: 'Sold out',
  InStoreOnly: 'In store only',
  OnlineOnly: 'Online only',
};

/**
 * A price in its currency's own format, e.g. £153.99 or ¥1,200.
 * @param {string | undefined} amount
 * @param {string | undefined} currency
 */
function formatPrice(amount, currency) {
  if (amount === undefined || currency === undefined) return undefined;
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(Number(amount));
  } catch {
    return `${amount} ${currency}`;
  }
}

/**
 * Several sellers' offers (schema.org AggregateOffer) rather than one.
 * @param {Product['offers']} offers
 * @returns {offers is AggregateOffer}
 */
const isAggregate = (offers) => Array.isArray(offers.offers);

/**
 * What a card shows of a product's offers: one offer, or the lowest of several.
 * @param {Product} product
 */
function offerOf(product) {
  const offers = product.offers;
  if (isAggregate(offers)) {
    const first = offers.offers[0];
    return {
      url: first?.url,
      price: formatPrice(offers.lowPrice, offers.priceCurrency),
      from: offers.offers.length > 1,
      availability: first?.availability,
    };
  }
  return {
    url: offers.url,
    price: formatPrice(offers.price, offers.priceCurrency),
    from: false,
    availability: offers.availability,
  };
}

function placeholder() {
  const box = document.createElement('div');
  box.className = 'placeholder';
  box.setAttribute('role', 'img');
  box.setAttribute('aria-label', 'No image');
  box.textContent = 'No image';
  return box;
}

/** @param {string} url */
function picture(url) {
  const image = document.createElement('img');
  image.src = url;
  image.alt = '';
  image.width = 128;
  image.height = 128;
  image.loading = 'lazy';
  image.addEventListener('error', () => image.replaceWith(placeholder()), { once: true });
  return image;
}

/** @param {Product} product */
function card(product) {
  const offer = offerOf(product);
  const item = document.createElement('li');
  item.className = 'card';
  const name = document.createElement('a');
  name.className = 'name';
  // Exactly as given: a result link the gateway signed breaks if it is rebuilt.
  if (offer.url !== undefined) name.href = offer.url;
  name.textContent = product.name;
  const price = document.createElement('p');
  price.className = 'price';
  price.textContent = offer.price
    ? `${offer.from ? 'from ' : ''}${offer.price}`
    : 'Price on request';
  const facts = document.createElement('p');
  facts.className = 'muted';
  const rating = product.aggregateRating
    ? `★ ${product.aggregateRating.ratingValue.toFixed(1)} (${product.aggregateRating.ratingCount})`
    : 'No ratings';
  const stock = AVAILABILITY[String(offer.availability).replace(/^https?:\/\/schema\.org\//, '')];
  facts.textContent = [rating, stock].filter(Boolean).join(' · ');
  const thumbnail = product.image?.thumbnail;
  item.append(thumbnail ? picture(thumbnail) : placeholder(), name, price, facts);
  return item;
}

/**
 * The cursor of the next page, from the last result list's `next` link.
 * @type {string | undefined}
 */
let nextCursor;

/**
 * @param {SearchQuery} query
 * @param {boolean} append
 */
async function search(query, append) {
  const error = $('search-error');
  clear(error);
  const answer = await api.GET('/api/search', { params: { query } });
  if (answer.error) {
    showProblem(error, answer.error);
    return;
  }
  const list = $('results');
  if (!append) list.replaceChildren();
  list.append(...answer.data.itemListElement.map(card));
  $('result-count').textContent = `${list.children.length} products`;
  // `next` is a link to this route with one opaque `cursor`: the cursor is all the next call needs.
  const next = answer.data.next;
  nextCursor =
    next === undefined
      ? undefined
      : (new URL(next, location.href).searchParams.get('cursor') ?? undefined);
  $('more').hidden = nextCursor === undefined;
}

const sortField = byId('sort', HTMLSelectElement);
/**
 * The orders the page's select offers (index.html), each one the route knows.
 * @type {readonly Sort[]}
 */
const SORTS = ['relevance', 'price_asc', 'price_desc', 'rating'];
/**
 * @param {string} value
 * @returns {value is Sort}
 */
const isSort = (value) => SORTS.some((sort) => sort === value);

byId('search-form', HTMLFormElement).addEventListener('submit', (event) => {
  event.preventDefault();
  const sort = sortField.value;
  void search({ q: field('q').value, sort: isSort(sort) ? sort : 'relevance' }, false);
});
sortField.addEventListener('change', () => byId('search-form', HTMLFormElement).requestSubmit());
$('more').addEventListener('click', () => {
  if (nextCursor !== undefined) void search({ cursor: nextCursor }, true);
});

/**
 * @template T
 * @param {HTMLElement} element
 * @param {readonly T[]} items
 * @param {(item: T) => string} text
 */
function list(element, items, text) {
  element.replaceChildren(
    ...items.map((entry) => {
      const li = document.createElement('li');
      li.textContent = text(entry);
      return li;
    }),
  );
  if (items.length === 0)
    element.replaceChildren(Object.assign(document.createElement('li'), { textContent: 'None' }));
}

/**
 * @param {HTMLElement} element
 * @param {Problem} problem
 */
function partError(element, problem) {
  const li = document.createElement('li');
  li.className = 'problem';
  showProblem(li, problem);
  element.replaceChildren(li);
}

/** @param {FirstScreen['session']} session */
function renderAccount(session) {
  const account = $('account');
  account.replaceChildren();
  if (session !== null && 'mode' in session) {
    account.textContent = `Service account: ${session.user.email}`;
    return;
  }
  if (session !== null) {
    const who = document.createElement('span');
    who.textContent = `Logged in as ${session.user.full_name} `;
    const logout = document.createElement('button');
    logout.type = 'button';
    logout.id = 'logout';
    logout.textContent = 'Log out';
    logout.addEventListener('click', async () => {
      await api.POST('/api/auth/logout');
      await start();
    });
    account.append(who, logout);
    return;
  }
  account.append(loginForm());
}

function loginForm() {
  const form = document.createElement('form');
  form.id = 'login-form';
  form.className = 'row';
  form.innerHTML =
    '<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>' +
    '<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>' +
    '<button type="submit">Log in</button>';
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const { error } = await api.POST('/api/auth/login', {
      body: { email: field('email').value, password: field('password').value },
    });
    if (error) showProblem($('notice'), error);
    else await start();
  });
  return form;
}

/**
 * The folder list follows GET /api/events. The browser reopens a dropped stream by itself; one
 * that a non-200 answer closed (a 401 after a logout elsewhere, a 503 from a full or stopping
 * gateway) the page reopens, with back-off, by starting over: the first screen again, which
 * follows the stream again if there is still somebody to follow it for.
 */
/** @type {EventSource | undefined} */
let events;
let backoffMs = 1000;
function followFolders() {
  events?.close();
  const stream = new EventSource('/api/events', { withCredentials: true });
  events = stream;
  stream.addEventListener('channel_folders', (message) => {
    backoffMs = 1000;
    // Each event's data is the folder route's JSON body (docs/frontend.md, Live updates).
    /** @type {ChannelFolders} */
    const folders = JSON.parse(String(message.data));
    list($('folders'), folders.channel_folders, (f) => f.name);
  });
  stream.addEventListener('error', () => {
    if (stream.readyState !== EventSource.CLOSED) return;
    if (events === stream) events = undefined;
    retryStart();
  });
}

function stopFollowing() {
  events?.close();
  events = undefined;
}

/**
 * Full jitter: a random wait up to the back-off, not the back-off itself. The pages of a
 * stopped or full gateway all lost their stream around the same moment; waiting the same
 * doubling steps, they would come back together, each wave larger than one gateway takes.
 */
function retryStart() {
  setTimeout(() => void start(), Math.random() * backoffMs);
  backoffMs = Math.min(backoffMs * 2, 30_000);
}

/** The first screen: one call to /api/bootstrap; each failed part shows its own problem. */
async function start() {
  clear($('notice'));
  let answer;
  try {
    answer = await api.GET('/api/bootstrap');
  } catch {
    // The gateway is away (a restart): try again shortly, as the stream would.
    retryStart();
    return;
  }
  if (answer.error) {
    showProblem($('notice'), answer.error);
    if (answer.error.status >= 500) retryStart();
    return;
  }
  const { data, errors } = answer.data;
  /** @param {Part} part */
  const failed = (part) => errors.find((problem) => problem.part === part);
  renderAccount(data.session);
  const sessionProblem = failed('session');
  if (sessionProblem) showProblem($('notice'), sessionProblem);
  $('search-available').textContent = data.search.available
    ? 'The search service is up.'
    : 'The search service is not answering right now.';
  renderPart(
    $('folders'),
    data.channel_folders?.channel_folders,
    failed('channel_folders'),
    (f) => f.name,
  );
  // Somebody to follow the folders for: a session, or the service account.
  if (data.session) followFolders();
  else stopFollowing();
  renderPart(
    $('drafts'),
    data.drafts?.drafts,
    failed('drafts'),
    (d) => d.content || '(empty draft)',
  );
  byId('status-form', HTMLFormElement).hidden = data.session === null;
}

/**
 * One part of the first screen: its items, its problem, or nothing (nobody logged in).
 * @template T
 * @param {HTMLElement} element
 * @param {readonly T[] | undefined} items
 * @param {Problem | undefined} problem
 * @param {(item: T) => string} text
 */
function renderPart(element, items, problem, text) {
  if (items) list(element, items, text);
  else if (problem) partError(element, problem);
  else list(element, [], text);
}

byId('status-form', HTMLFormElement).addEventListener('submit', async (event) => {
  event.preventDefault();
  for (const name of ['user_id', 'status_text', 'emoji_name']) clear($(`${name}-error`));
  const result = $('status-result');
  result.textContent = '';
  const emoji = field('emoji-name').value;
  const { error } = await api.POST('/api/chat/users/{user_id}/status', {
    params: { path: { user_id: field('user-id').value } },
    body: {
      status_text: field('status-text').value,
      ...(emoji === '' ? {} : { emoji_name: emoji }),
    },
  });
  if (!error) {
    result.textContent = 'Status set.';
    return;
  }
  // Validation failures name each field: the message goes next to it.
  for (const { path, message } of error.errors ?? []) {
    const target = document.getElementById(`${path.split('.').at(-1)}-error`);
    if (target) {
      target.textContent = message;
      target.hidden = false;
    }
  }
  const summary = document.createElement('div');
  summary.className = 'problem';
  showProblem(summary, error);
  result.replaceChildren(summary);
});

await start();
byId('search-form', HTMLFormElement).requestSubmit();
