/** The project's root folder (the bundle's inputs and dist/ are found from it). */
export const root = new URL('../..', import.meta.url).pathname;
