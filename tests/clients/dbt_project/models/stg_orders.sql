{{ config(materialized='view') }}
select id, city, amount, order_date from {{ ref('raw_orders') }}
