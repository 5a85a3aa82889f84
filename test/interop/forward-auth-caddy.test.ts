/**
 * Forward auth behind Debian's real Caddy 2.6 (issue 34): the snippet Gatehouse prints for Caddy,
 * run as is, with headless Chromium through the whole story (test/helpers/forward-auth-flow.ts).
 */
import { forwardAuthStory } from '../helpers/forward-auth-flow.js';

forwardAuthStory('caddy');
