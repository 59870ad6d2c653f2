import type { CatalogueSeller, CurrencyCode } from './search-types.js';

/** Fixed decimals per ISO 4217 currency, and a rough rate so prices look plausible. */
export const CURRENCIES: Record<CurrencyCode, { decimals: number; perEur: number }> = {
  EUR: { decimals: 2, perEur: 1 },
  USD: { decimals: 2, perEur: 1.08 },
  GBP: { decimals: 2, perEur: 0.85 },
  JPY: { decimals: 0, perEur: 162 },
  KWD: { decimals: 3, perEur: 0.33 },
};

/** A target as configured; its logo becomes an image on the image host. */
export type SellerData = Omit<CatalogueSeller, 'logo'> & {
  /** Logo file format, when the seller has a logo; formats differ between targets. */
  logo?: 'png' | 'webp' | 'jpg';
};

// One target per line reads as a configuration table.
// prettier-ignore
export const SELLERS: readonly SellerData[] = [
  { key: 'soundhaus', name: 'SoundHaus', url: 'https://www.soundhaus.example/', currency: 'EUR', logo: 'png', minimal: false, productPath: 'p/{slug}/{sku}', categoryUrls: true, skuPrefix: 'SH' },
  { key: 'northwind', name: 'Northwind Outfitters', url: 'https://northwind-outfitters.example/', currency: 'USD', logo: 'webp', minimal: false, productPath: 'products/{slug}?variant={sku}', categoryUrls: true, skuPrefix: 'NW' },
  { key: 'kettle', name: 'Kettle & Crumb', url: 'https://www.kettleandcrumb.example/', currency: 'GBP', minimal: false, productPath: 'shop/{slug}-{sku}.html', categoryUrls: false, skuPrefix: 'KC' },
  { key: 'akiba', name: 'Akihabara Direct', url: 'https://akihabara-direct.example/', currency: 'JPY', logo: 'jpg', minimal: false, productPath: 'item.php?id={sku}&ref=search', categoryUrls: true, skuPrefix: 'AD' },
  { key: 'gulf', name: 'Gulf Gadgets', url: 'https://www.gulfgadgets.example/', currency: 'KWD', minimal: false, productPath: 'en/p/{sku}', categoryUrls: true, skuPrefix: 'GG' },
  { key: 'megamart', name: 'MegaMart', url: 'https://www.megamart.example/', currency: 'USD', logo: 'png', minimal: true, productPath: 'ip/{slug}/{sku}', categoryUrls: true, skuPrefix: 'MM' },
  { key: 'buchladen', name: 'Buchladen Köln', url: 'https://buchladen-koeln.example/', currency: 'EUR', minimal: true, productPath: 'artikel/{sku}', categoryUrls: false, skuPrefix: 'BK' },
  { key: 'pioneer', name: 'Pioneer Sports', url: 'https://pioneer-sports.example/', currency: 'GBP', logo: 'webp', minimal: false, productPath: 'dp/{sku}/{slug}', categoryUrls: true, skuPrefix: 'PS' },
  { key: 'bazar', name: 'Le Petit Bazar', url: 'https://www.lepetitbazar.example/', currency: 'EUR', logo: 'png', minimal: false, productPath: 'produit/{slug}?ref={sku}', categoryUrls: true, skuPrefix: 'LB' },
  { key: 'cascade', name: 'Cascade Electronics', url: 'https://cascade-electronics.example/', currency: 'USD', minimal: true, productPath: 'catalog/{sku}', categoryUrls: false, skuPrefix: 'CE' },
];

export interface CategoryData {
  key: string;
  /** Category path in the shared taxonomy; the last name is the category itself. */
  path: string[];
  /** Relative share of the catalogue. */
  weight: number;
  brands: { name: string; code: string }[];
  /** Product name template: {brand} {model} {adj} {noun} {title}. */
  template: string;
  adjectives: string[];
  nouns: string[];
  /** Two word lists joined into a title (books, games). */
  titles?: [string[], string[]];
  /** Variant labels appended to offer names when a target lists variants. */
  variants: string[];
  priceEur: [number, number];
  /** Sentences with the same placeholders plus {n}, a small number. */
  descriptions: string[];
  /** Products carry ISBN-13s (978…) instead of retail GTINs. */
  isbn?: boolean;
}

// Formatting would spread each table over dozens of lines and hide the data's shape.
// prettier-ignore
export const CATEGORIES: readonly CategoryData[] = [
  {
    key: 'headphones', path: ['Electronics', 'Audio', 'Headphones'], weight: 1.4,
    brands: [{ name: 'Sonora', code: 'SN' }, { name: 'Auralis', code: 'AU' }, { name: 'Koto Audio', code: 'KA' }, { name: 'Fjordsound', code: 'FJ' }],
    template: '{brand} {model} {adj} {noun}',
    adjectives: ['Wireless', 'Noise-Cancelling', 'Over-Ear', 'On-Ear', 'Bluetooth', 'Studio', 'Sport'],
    nouns: ['Headphones', 'Headphones', 'Earbuds', 'Headset'], variants: ['Black', 'White', 'Midnight Blue', 'Sand'],
    priceEur: [19, 449],
    descriptions: ['{adj} {noun} with up to {n}0 hours of battery life.', 'Balanced sound with deep bass and clear highs.', 'Foldable design with a hard-shell carrying case.', 'Multipoint pairing: switch between two devices.'],
  },
  {
    key: 'coffee-makers', path: ['Home & Kitchen', 'Kitchen Appliances', 'Coffee Makers'], weight: 1.2,
    brands: [{ name: 'Brewhaus', code: 'BH' }, { name: 'Crema & Co', code: 'CC' }, { name: 'Mokara', code: 'MK' }, { name: 'Kaffeewerk', code: 'KW' }],
    template: '{brand} {model} {adj} {noun}',
    adjectives: ['Drip', 'Espresso', 'Pour-Over', 'Programmable', 'Single-Serve', 'Bean-to-Cup'],
    nouns: ['Coffee Maker', 'Espresso Machine', 'Coffee Machine', 'Coffee Brewer'], variants: ['Stainless Steel', 'Matte Black', 'Cream'],
    priceEur: [25, 1200],
    descriptions: ['Brews up to {n} cups of fresh coffee.', '15-bar pump and a steam wand for milk foam.', 'Keeps coffee hot for two hours with a thermal carafe.', 'Built-in grinder with {n} fineness settings.'],
  },
  {
    key: 'running-shoes', path: ['Sports & Outdoors', 'Footwear', 'Running Shoes'], weight: 1.3,
    brands: [{ name: 'Stridewell', code: 'SW' }, { name: 'Asphalt', code: 'AS' }, { name: 'Trailforge', code: 'TF' }, { name: 'Nimbra', code: 'NB' }],
    template: '{brand} {model} {adj} {noun}',
    adjectives: ['Trail', 'Road', 'Cushioned', 'Lightweight', 'Stability', 'Racing'],
    nouns: ['Running Shoes', 'Running Shoe', 'Trainers', 'Shoes'], variants: ['EU 40', 'EU 42', 'EU 44', 'EU 46'],
    priceEur: [45, 220],
    descriptions: ['Responsive foam midsole for long runs.', 'Breathable mesh upper and a {n} mm heel drop.', 'Grippy outsole for wet roads and light trails.', 'Weighs just {n}00 grams per shoe.'],
  },
  {
    key: 'laptops', path: ['Electronics', 'Computers', 'Laptops'], weight: 1.2,
    brands: [{ name: 'Lumio', code: 'LM' }, { name: 'Corvex', code: 'CX' }, { name: 'Nordbook', code: 'NO' }, { name: 'Tessera', code: 'TS' }],
    template: '{brand} {model} {adj} {noun}',
    adjectives: ['14-inch', '15.6-inch', 'Ultralight', 'Gaming', '2-in-1', 'Business'],
    nouns: ['Laptop', 'Notebook', 'Laptop'], variants: ['16 GB / 512 GB', '32 GB / 1 TB', '8 GB / 256 GB'],
    priceEur: [299, 3499],
    descriptions: ['{n}-core processor and a full-HD IPS display.', 'All-day battery and a backlit keyboard.', 'Aluminium chassis, two USB-C ports with charging.', 'Dedicated graphics for games and video editing.'],
  },
  {
    key: 'books', path: ['Books', 'Fiction'], weight: 1.5,
    brands: [{ name: 'Harbor Press', code: 'HP' }, { name: 'Quillmark', code: 'QM' }, { name: 'Lanternfield Books', code: 'LF' }],
    template: '{title} ({adj})',
    adjectives: ['Paperback', 'Hardcover', 'Illustrated Edition'], nouns: ['Novel'],
    titles: [['The Quiet', 'A Winter', 'The Last', 'Beyond the', 'Letters from the', 'The Glass', 'Under the'], ['Harbor', 'Orchard', 'Cartographer', 'Lighthouse', 'Meridian', 'Archive', 'Garden', 'Orbit']],
    variants: ['Signed Copy', 'Large Print'],
    priceEur: [6, 45],
    descriptions: ['A sweeping {noun} told across {n} generations.', 'Shortlisted for a national book prize.', 'The long-awaited sequel, now in paperback.', 'A gripping mystery set on a remote island.'],
    isbn: true,
  },
  {
    key: 'kitchen-knives', path: ['Home & Kitchen', 'Cutlery', 'Kitchen Knives'], weight: 0.9,
    brands: [{ name: 'Hamon', code: 'HM' }, { name: 'Steelbrook', code: 'SB' }, { name: 'Kiritsuke Works', code: 'KI' }],
    template: '{brand} {model} {adj} {noun}',
    adjectives: ["8-inch Chef's", 'Santoku', 'Paring', 'Bread', 'Damascus', 'Utility'],
    nouns: ['Knife', 'Knife', 'Knife Set'], variants: ['Walnut Handle', 'Black Handle'],
    priceEur: [12, 380],
    descriptions: ['Forged from high-carbon stainless steel.', '{n}-layer Damascus blade, hand-sharpened to 15 degrees.', 'Full tang and an ergonomic handle.', 'Comes with a magnetic blade guard.'],
  },
  {
    key: 'smartphones', path: ['Electronics', 'Mobile Phones', 'Smartphones'], weight: 1.0,
    brands: [{ name: 'Pixelon', code: 'PX' }, { name: 'Nova Mobile', code: 'NM' }, { name: 'Orbit', code: 'OR' }],
    template: '{brand} {model} {adj} {noun}',
    adjectives: ['5G', 'Dual-SIM', 'Compact', 'Pro', '128 GB', '256 GB'],
    nouns: ['Smartphone', 'Phone'], variants: ['Graphite', 'Silver', 'Ocean Green'],
    priceEur: [129, 1499],
    descriptions: ['{n}.1-inch OLED display with a 120 Hz refresh rate.', 'Triple camera with optical zoom.', 'Fast charging: 50 % in {n}0 minutes.', 'Water and dust resistant (IP68).'],
  },
  {
    key: 'backpacks', path: ['Bags & Luggage', 'Backpacks'], weight: 0.9,
    brands: [{ name: 'Packwell', code: 'PW' }, { name: 'Ridgeway', code: 'RW' }, { name: 'Urbanaut', code: 'UN' }],
    template: '{brand} {model} {adj} {noun}',
    adjectives: ['Hiking', 'Laptop', 'Travel', 'Waterproof', '20L', 'Rolltop'],
    nouns: ['Backpack', 'Rucksack', 'Daypack'], variants: ['Olive', 'Black', 'Rust'],
    priceEur: [19, 260],
    descriptions: ['Padded sleeve fits laptops up to {n} inches.', 'Recycled nylon shell with taped seams.', 'Ventilated back panel and a hip belt.', 'Lockable zips and a hidden passport pocket.'],
  },
  {
    key: 'desk-lamps', path: ['Home & Garden', 'Lighting', 'Desk Lamps'], weight: 0.7,
    brands: [{ name: 'Lumina', code: 'LU' }, { name: 'Arcwell', code: 'AW' }, { name: 'Nordlys', code: 'NL' }],
    template: '{brand} {model} {adj} {noun}',
    adjectives: ['LED', 'Dimmable', 'Architect', 'Clamp', 'USB-C', 'Wireless Charging'],
    nouns: ['Desk Lamp', 'Table Lamp', 'Task Light'], variants: ['White', 'Black', 'Brass'],
    priceEur: [15, 240],
    descriptions: ['{n} brightness levels and warm-to-cool colour temperature.', 'Flicker-free light that is easy on the eyes.', 'Adjustable arm with a weighted base.', 'Touch control with memory function.'],
  },
  {
    key: 'board-games', path: ['Toys & Games', 'Games', 'Board Games'], weight: 0.8,
    brands: [{ name: 'Meeple Forge', code: 'MF' }, { name: 'Tabletop Tales', code: 'TT' }, { name: 'Dicewise', code: 'DW' }],
    template: '{title}: {adj} {noun}',
    adjectives: ['Strategy', 'Family', 'Cooperative', 'Party', 'Deck-Building'], nouns: ['Board Game', 'Game'],
    titles: [['Harbor', 'Sky', 'Iron', 'Emerald', 'Clockwork', 'Lantern'], ['Lights', 'Kingdoms', 'Railways', 'Expedition', 'Bazaar', 'Frontier']],
    variants: ['English Edition', 'German Edition'],
    priceEur: [15, 120],
    descriptions: ['For 2 to {n} players, ages 10 and up.', 'Plays in about {n}0 minutes.', 'Includes {n}0 hand-painted wooden pieces.', 'Winner of a family game award.'],
  },
];
