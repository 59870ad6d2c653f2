// The demo frontend: plain ES modules against the gateway on the same origin. Every call goes
// to /api; every error shown is the problem object the gateway answered (RFC 9457).

const $ = (id) => document.getElementById(id);

/**
 * Unsafe requests carry the anti-forgery header the gateway requires (docs/frontend.md,
 * Cross-site protection).
 */
async function call(path, options = {}) {
  const unsafe = options.method !== undefined && options.method !== 'GET';
  const response = await fetch(path, {
    ...options,
    credentials: 'same-origin',
    headers: {
      Accept: 'application/json',
      ...(unsafe ? { 'X-CSRF': '1' } : {}),
      ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
  });
  if (response.status === 204) return { ok: true, status: 204 };
  const body = await response.json();
  return { ok: response.ok, status: response.status, body };
}

/** A problem object as a person reads it: what happened, and what to quote when asking. */
function showProblem(element, problem) {
  element.replaceChildren();
  const title = document.createElement('strong');
  title.textContent = `${problem.title ?? 'Error'} (${problem.status ?? '?'})`;
  const detail = document.createElement('p');
  detail.textContent = problem.detail ?? '';
  const meta = document.createElement('p');
  meta.className = 'muted';
  meta.textContent = `${problem.code ?? ''} · ${problem.source ?? ''} · request ${problem.requestId ?? ''}`;
  element.append(title, detail, meta);
  element.hidden = false;
}

function clear(element) {
  element.replaceChildren();
  element.hidden = true;
}

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

/** A price in its currency's own format, e.g. £153.99 or ¥1,200. */
function formatPrice(amount, currency) {
  if (amount === undefined || currency === undefined) return undefined;
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(Number(amount));
  } catch {
    return `${amount} ${currency}`;
  }
}

function offerOf(product) {
  const offers = product.offers;
  if (Array.isArray(offers.offers)) {
    const first = offers.offers[0];
    return {
      url: first.url,
      price: formatPrice(offers.lowPrice, offers.priceCurrency),
      from: offers.offers.length > 1,
      availability: first.availability,
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

function card(product) {
  const offer = offerOf(product);
  const item = document.createElement('li');
  item.className = 'card';
  let picture;
  if (product.image?.thumbnail) {
    picture = document.createElement('img');
    picture.src = product.image.thumbnail;
    picture.alt = '';
    picture.width = 128;
    picture.height = 128;
    picture.loading = 'lazy';
    picture.addEventListener('error', () => picture.replaceWith(placeholder()), { once: true });
  } else {
    picture = placeholder();
  }
  const name = document.createElement('a');
  name.className = 'name';
  name.href = offer.url;
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
  item.append(picture, name, price, facts);
  return item;
}

let nextPage;

async function search(path, append) {
  const error = $('search-error');
  clear(error);
  const { ok, body } = await call(path);
  if (!ok) {
    showProblem(error, body);
    return;
  }
  const list = $('results');
  if (!append) list.replaceChildren();
  list.append(...body.itemListElement.map(card));
  $('result-count').textContent = `${list.children.length} products`;
  nextPage = body.next;
  $('more').hidden = nextPage === undefined;
}

$('search-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const params = new URLSearchParams({ q: $('q').value, sort: $('sort').value });
  void search(`/api/search?${params}`, false);
});
$('sort').addEventListener('change', () => $('search-form').requestSubmit());
$('more').addEventListener('click', () => {
  if (nextPage) void search(nextPage, true);
});

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

function partError(element, problem) {
  const li = document.createElement('li');
  li.className = 'problem';
  showProblem(li, problem);
  element.replaceChildren(li);
}

function renderAccount(session) {
  const account = $('account');
  account.replaceChildren();
  if (session?.mode === 'service') {
    account.textContent = `Service account: ${session.user.email}`;
    return;
  }
  if (session) {
    const who = document.createElement('span');
    who.textContent = `Logged in as ${session.user.full_name} `;
    const logout = document.createElement('button');
    logout.type = 'button';
    logout.id = 'logout';
    logout.textContent = 'Log out';
    logout.addEventListener('click', async () => {
      await call('/api/auth/logout', { method: 'POST' });
      await start();
    });
    account.append(who, logout);
    return;
  }
  const form = document.createElement('form');
  form.id = 'login-form';
  form.className = 'row';
  form.innerHTML =
    '<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>' +
    '<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>' +
    '<button type="submit">Log in</button>';
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const { ok, body } = await call('/api/auth/login', {
      method: 'POST',
      body: JSON.stringify({ email: $('email').value, password: $('password').value }),
    });
    if (ok) await start();
    else showProblem($('notice'), body);
  });
  account.append(form);
}

/**
 * The folder list follows GET /api/events. The browser reopens a dropped stream by itself; one
 * that a non-200 answer closed (a 401 after a logout elsewhere, a 503 from a full or stopping
 * gateway) the page reopens, with back-off, by starting over: the first screen again, which
 * follows the stream again if there is still somebody to follow it for.
 */
let events;
let backoffMs = 1000;
function followFolders() {
  events?.close();
  events = new EventSource('/api/events', { withCredentials: true });
  events.addEventListener('channel_folders', (message) => {
    backoffMs = 1000;
    list($('folders'), JSON.parse(message.data).channel_folders, (f) => f.name);
  });
  events.addEventListener('error', () => {
    if (events.readyState !== EventSource.CLOSED) return;
    events = undefined;
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
    answer = await call('/api/bootstrap');
  } catch {
    // The gateway is away (a restart): try again shortly, as the stream would.
    retryStart();
    return;
  }
  const { ok, body } = answer;
  if (!ok) {
    showProblem($('notice'), body);
    if (body?.status >= 500) retryStart();
    return;
  }
  const { data, errors } = body;
  const failed = (part) => errors.find((problem) => problem.part === part);
  renderAccount(data.session);
  if (failed('session')) showProblem($('notice'), failed('session'));
  $('search-available').textContent = data.search.available
    ? 'The search service is up.'
    : 'The search service is not answering right now.';
  if (data.channel_folders) list($('folders'), data.channel_folders.channel_folders, (f) => f.name);
  else if (failed('channel_folders')) partError($('folders'), failed('channel_folders'));
  else list($('folders'), [], () => '');
  // Somebody to follow the folders for: a session, or the service account.
  if (data.session) followFolders();
  else stopFollowing();
  if (data.drafts) list($('drafts'), data.drafts.drafts, (d) => d.content || '(empty draft)');
  else if (failed('drafts')) partError($('drafts'), failed('drafts'));
  else list($('drafts'), [], () => '');
  $('status-form').hidden = data.session === null;
}

$('status-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  for (const field of ['user_id', 'status_text', 'emoji_name']) clear($(`${field}-error`));
  const result = $('status-result');
  result.textContent = '';
  const body = { status_text: $('status-text').value };
  if ($('emoji-name').value !== '') body.emoji_name = $('emoji-name').value;
  const userId = encodeURIComponent($('user-id').value);
  const answer = await call(`/api/chat/users/${userId}/status`, {
    method: 'POST',
    body: JSON.stringify(body),
  });
  if (answer.ok) {
    result.textContent = 'Status set.';
    return;
  }
  // Validation failures name each field: the message goes next to it.
  const fields = answer.body.errors ?? [];
  for (const { path, message } of fields) {
    const target = $(`${path.split('.').at(-1)}-error`);
    if (target) {
      target.textContent = message;
      target.hidden = false;
    }
  }
  const summary = document.createElement('div');
  summary.className = 'problem';
  showProblem(summary, answer.body);
  result.replaceChildren(summary);
});

await start();
$('search-form').requestSubmit();
