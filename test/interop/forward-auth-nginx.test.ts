/**
 * Forward auth behind Debian's real nginx 1.22 with `auth_request` (issue 34): the snippet
 * Gatehouse prints for nginx (bound to loopback by the test), with headless Chromium through the
 * whole story (test/helpers/forward-auth-flow.ts).
 */
import { forwardAuthStory } from '../helpers/forward-auth-flow.js';

forwardAuthStory('nginx');
