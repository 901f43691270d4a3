// An admission webhook to run on your own machine (Node 20, no dependencies): it refuses
// CronTabs that run every minute. Make a certificate for 127.0.0.1, then start it:
//   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
//     -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout webhook.key -out webhook.crt
//   node deploy/examples/crontab-webhook.mjs        # listens on https://127.0.0.1:8443/validate
// Register it with deploy/examples/crontab-webhook.yaml (README, "A webhook on your machine").
import { readFileSync } from 'node:fs';
import https from 'node:https';

const port = Number(process.env.WEBHOOK_PORT ?? 8443);
const options = { cert: readFileSync(process.env.WEBHOOK_CERT ?? 'webhook.crt'), key: readFileSync(process.env.WEBHOOK_KEY ?? 'webhook.key') };

https
  .createServer(options, (req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const review = JSON.parse(body);
      const { uid, object } = review.request;
      const everyMinute = object?.spec?.cronSpec === '* * * * *';
      const response = everyMinute
        ? { uid, allowed: false, status: { code: 403, message: 'this platform does not run CronTabs every minute' } }
        : { uid, allowed: true };
      console.log(`${review.request.operation} ${object?.metadata?.name}: ${everyMinute ? 'denied' : 'allowed'}`);
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  })
  .listen(port, '127.0.0.1', () => console.log(`webhook on https://127.0.0.1:${port}/validate`));
