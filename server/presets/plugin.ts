/** The presets feature: its admin routes under /api/admin (presets/routes.ts). */
import { adminFeature } from '../http/admin-feature.js';
import { presetRoutes } from './routes.js';

export const presetsFeature = adminFeature(presetRoutes);
