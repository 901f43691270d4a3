import { render } from 'preact';
import '@picocss/pico/css/pico.min.css';
import { App } from './app.js';
import { applyTheme } from './theme.js';
import './console.css';

applyTheme();
render(<App />, document.getElementById('app')!);
