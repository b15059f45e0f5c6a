<?php

declare(strict_types=1);

// The tests run without `composer install`: this PSR-4 autoloader maps
// Pixgate\ to src/ and Pixgate\Tests\ to tests/, as composer.json does.
spl_autoload_register(static function (string $class): void {
    foreach (['Pixgate\\Tests\\' => __DIR__ . '/', 'Pixgate\\' => dirname(__DIR__) . '/src/'] as $prefix => $dir) {
        if (str_starts_with($class, $prefix)) {
            $file = $dir . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
            if (is_file($file)) {
                require $file;
            }
            return;
        }
    }
});
