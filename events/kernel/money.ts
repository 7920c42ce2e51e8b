/** Credits are integer milli-credits everywhere; only the API edge converts to numbers with at most 2 decimals. */
export const CREDIT = 1000;

export const toCredits = (milli: number): number => Math.round(milli / 10) / 100;
